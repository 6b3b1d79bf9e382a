// LDBC SNB Interactive IC4, Rhizome's formulation: tags of friends' posts
// created in [$startDate, $endDate) that no friend's post used before
// $startDate, by number of such posts.
MATCH (:Person {id: $personId})-[:KNOWS]-(:Person)<-[:HAS_CREATOR]-(post:Post)-[:HAS_TAG]->(topic:Tag)
WITH DISTINCT topic, post
WITH topic,
     count(CASE WHEN $startDate <= post.creationDate < $endDate THEN 1 END) AS inWindow,
     count(CASE WHEN post.creationDate < $startDate THEN 1 END) AS earlier
WHERE inWindow > 0 AND earlier = 0
RETURN topic.name AS tagName, inWindow AS postCount
ORDER BY postCount DESC, tagName ASC
LIMIT 10
