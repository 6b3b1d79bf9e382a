// LDBC SNB Interactive IC9, Rhizome's formulation: the 20 newest messages
// before $maxDate by friends and friends of friends.
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person)
WHERE contact <> start
WITH DISTINCT contact
MATCH (contact)<-[:HAS_CREATOR]-(msg:Message)
WHERE msg.creationDate < $maxDate
RETURN contact.id AS personId,
       contact.firstName AS personFirstName,
       contact.lastName AS personLastName,
       msg.id AS commentOrPostId,
       coalesce(msg.content, msg.imageFile) AS commentOrPostContent,
       msg.creationDate AS commentOrPostCreationDate
ORDER BY commentOrPostCreationDate DESC, commentOrPostId ASC
LIMIT 20
