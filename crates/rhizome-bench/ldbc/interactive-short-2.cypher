// LDBC SNB Interactive IS2, Rhizome's formulation: the person's 10 newest
// messages, each with the post that starts its thread and that post's author.
MATCH (:Person {id: $personId})<-[:HAS_CREATOR]-(msg:Message)
WITH msg ORDER BY msg.creationDate DESC, msg.id ASC LIMIT 10
MATCH (msg)-[:REPLY_OF*0..]->(root:Post)-[:HAS_CREATOR]->(op:Person)
RETURN msg.id AS messageId,
       coalesce(msg.imageFile, msg.content) AS messageContent,
       msg.creationDate AS messageCreationDate,
       root.id AS postId,
       op.id AS personId,
       op.firstName AS personFirstName,
       op.lastName AS personLastName
ORDER BY messageCreationDate DESC, messageId ASC
