// LDBC SNB Interactive IS7, Rhizome's formulation: direct replies to a
// message, their authors, and whether each author knows the message's author.
MATCH (msg:Message {id: $messageId})-[:HAS_CREATOR]->(author:Person)
MATCH (msg)<-[:REPLY_OF]-(reply:Comment)-[:HAS_CREATOR]->(replier:Person)
RETURN reply.id AS commentId,
       reply.content AS commentContent,
       reply.creationDate AS commentCreationDate,
       replier.id AS replyAuthorId,
       replier.firstName AS replyAuthorFirstName,
       replier.lastName AS replyAuthorLastName,
       EXISTS { (replier)-[:KNOWS]-(author) } AS replyAuthorKnowsOriginalMessageAuthor
ORDER BY commentCreationDate DESC, replyAuthorId ASC
