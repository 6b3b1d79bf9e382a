// LDBC SNB Interactive IS5, Rhizome's formulation: the author of a message.
MATCH (msg:Message)-[:HAS_CREATOR]->(author:Person)
WHERE msg.id = $messageId
RETURN author.id AS personId,
       author.firstName AS firstName,
       author.lastName AS lastName
