// LDBC SNB Interactive IC2, Rhizome's formulation: the 20 newest messages
// by the person's friends created before $maxDate.
MATCH (:Person {id: $personId})-[:KNOWS]-(buddy:Person)
MATCH (buddy)<-[:HAS_CREATOR]-(msg:Message)
WHERE msg.creationDate < $maxDate
RETURN buddy.id AS personId,
       buddy.firstName AS personFirstName,
       buddy.lastName AS personLastName,
       msg.id AS postOrCommentId,
       coalesce(msg.content, msg.imageFile) AS postOrCommentContent,
       msg.creationDate AS postOrCommentCreationDate
ORDER BY postOrCommentCreationDate DESC, postOrCommentId ASC
LIMIT 20
