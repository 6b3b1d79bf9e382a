// LDBC SNB Interactive IC8, Rhizome's formulation: the 20 newest comments
// replying to any of the person's messages, with their authors.
MATCH (:Person {id: $personId})<-[:HAS_CREATOR]-(:Message)<-[:REPLY_OF]-(reply:Comment)
MATCH (reply)-[:HAS_CREATOR]->(writer:Person)
RETURN writer.id AS personId,
       writer.firstName AS personFirstName,
       writer.lastName AS personLastName,
       reply.creationDate AS commentCreationDate,
       reply.id AS commentId,
       reply.content AS commentContent
ORDER BY commentCreationDate DESC, commentId ASC
LIMIT 20
