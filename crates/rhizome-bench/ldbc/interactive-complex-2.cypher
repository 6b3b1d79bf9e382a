// LDBC SNB Interactive IC2, Rhizome's formulation: the 20 newest messages
// by the person's friends created before $maxDate. The 20 are chosen on
// date and id alone; their text is read only for those.
MATCH (:Person {id: $personId})-[:KNOWS]-(buddy:Person)
MATCH (buddy)<-[:HAS_CREATOR]-(msg:Message)
WHERE msg.creationDate < $maxDate
WITH buddy, msg, msg.creationDate AS created, msg.id AS msgId
ORDER BY created DESC, msgId ASC
LIMIT 20
RETURN buddy.id AS personId,
       buddy.firstName AS personFirstName,
       buddy.lastName AS personLastName,
       msgId AS postOrCommentId,
       coalesce(msg.content, msg.imageFile) AS postOrCommentContent,
       created AS postOrCommentCreationDate
ORDER BY postOrCommentCreationDate DESC, postOrCommentId ASC
