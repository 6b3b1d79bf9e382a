// LDBC SNB Interactive IC12, Rhizome's formulation: friends' comments that
// reply to posts tagged with a tag of class $tagClassName or one of its
// subclasses (or a tag of that name), per friend: the tags and the number
// of such comments.
MATCH (:Person {id: $personId})-[:KNOWS]-(buddy:Person)<-[:HAS_CREATOR]-(c:Comment)-[:REPLY_OF]->(:Post)-[:HAS_TAG]->(topic:Tag)
WHERE topic.name = $tagClassName
   OR EXISTS { (topic)-[:HAS_TYPE]->(:TagClass)-[:IS_SUBCLASS_OF*0..]->(:TagClass {name: $tagClassName}) }
WITH buddy, collect(DISTINCT topic.name) AS tagNames, count(DISTINCT c) AS replyCount
RETURN buddy.id AS personId,
       buddy.firstName AS personFirstName,
       buddy.lastName AS personLastName,
       tagNames,
       replyCount
ORDER BY replyCount DESC, personId ASC
LIMIT 20
