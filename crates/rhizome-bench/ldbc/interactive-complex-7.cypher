// LDBC SNB Interactive IC7, Rhizome's formulation: people who liked the
// person's messages, each with their latest like (ties: lowest message id),
// the minutes between message and like, and whether they are strangers.
MATCH (author:Person {id: $personId})<-[:HAS_CREATOR]-(:Message)<-[l:LIKES]-(fan:Person)
WITH author, fan, max(l.creationDate) AS likedAt
MATCH (author)<-[:HAS_CREATOR]-(m:Message)<-[l:LIKES]-(fan)
WHERE l.creationDate = likedAt
WITH author, fan, likedAt, min(m.id) AS msgId
MATCH (author)<-[:HAS_CREATOR]-(msg:Message)
WHERE msg.id = msgId
RETURN fan.id AS personId,
       fan.firstName AS personFirstName,
       fan.lastName AS personLastName,
       likedAt AS likeCreationDate,
       msgId AS commentOrPostId,
       coalesce(msg.content, msg.imageFile) AS commentOrPostContent,
       (likedAt - msg.creationDate) / 60000 AS minutesLatency,
       NOT EXISTS { (fan)-[:KNOWS]-(author) } AS isNew
ORDER BY likeCreationDate DESC, personId ASC
LIMIT 20
