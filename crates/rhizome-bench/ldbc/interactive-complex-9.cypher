// LDBC SNB Interactive IC9, Rhizome's formulation: the 20 newest messages
// before $maxDate by friends and friends of friends. The 20 are chosen on
// date and id alone; their text is read only for those.
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person)
WHERE contact <> start
WITH DISTINCT contact
MATCH (contact)<-[:HAS_CREATOR]-(msg:Message)
WHERE msg.creationDate < $maxDate
WITH contact, msg, msg.creationDate AS created, msg.id AS msgId
ORDER BY created DESC, msgId ASC
LIMIT 20
RETURN contact.id AS personId,
       contact.firstName AS personFirstName,
       contact.lastName AS personLastName,
       msgId AS commentOrPostId,
       coalesce(msg.content, msg.imageFile) AS commentOrPostContent,
       created AS commentOrPostCreationDate
ORDER BY commentOrPostCreationDate DESC, commentOrPostId ASC
