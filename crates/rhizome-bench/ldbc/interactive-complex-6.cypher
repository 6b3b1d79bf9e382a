// LDBC SNB Interactive IC6, Rhizome's formulation: other tags on posts of
// friends and friends of friends that carry the tag $tagName.
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person)
WHERE contact <> start
WITH DISTINCT contact
MATCH (contact)<-[:HAS_CREATOR]-(post:Post)-[:HAS_TAG]->(:Tag {name: $tagName})
MATCH (post)-[:HAS_TAG]->(other:Tag)
WHERE other.name <> $tagName
RETURN other.name AS tagName, count(post) AS postCount
ORDER BY postCount DESC, tagName ASC
LIMIT 10
