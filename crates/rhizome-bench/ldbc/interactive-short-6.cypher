// LDBC SNB Interactive IS6, Rhizome's formulation: the forum holding the
// thread of a message, and the forum's moderator.
MATCH (msg:Message {id: $messageId})-[:REPLY_OF*0..]->(root:Post)
MATCH (root)<-[:CONTAINER_OF]-(forum:Forum)-[:HAS_MODERATOR]->(moderator:Person)
RETURN forum.id AS forumId,
       forum.title AS forumTitle,
       moderator.id AS moderatorId,
       moderator.firstName AS moderatorFirstName,
       moderator.lastName AS moderatorLastName
