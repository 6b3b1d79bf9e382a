// LDBC SNB Interactive IC5, Rhizome's formulation: forums that friends and
// friends of friends joined after $minDate, by the number of posts those
// new members wrote in them. The membership date is the `creationDate`
// property of HAS_MEMBER (the CSV files' `joinDate`, renamed after import
// as in LDBC's reference implementation).
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(member:Person)
WHERE member <> start
WITH DISTINCT member
MATCH (forum:Forum)-[joined:HAS_MEMBER]->(member)
WHERE joined.creationDate > $minDate
WITH forum, sum(COUNT { (forum)-[:CONTAINER_OF]->(:Post)-[:HAS_CREATOR]->(member) }) AS postCount
RETURN forum.title AS forumName, postCount
ORDER BY postCount DESC, forum.id ASC
LIMIT 20
