// LDBC SNB Interactive IC14, Rhizome's formulation: all shortest KNOWS paths
// between two people, weighted per consecutive pair by their interactions:
// 1.0 for each comment of one replying to a post of the other, 0.5 for each
// comment of one replying to a comment of the other. Each KNOWS relationship
// on some shortest path is weighed once, then the paths sum their weights.
MATCH (p1:Person {id: $person1Id}), (p2:Person {id: $person2Id})
MATCH route = allShortestPaths((p1)-[:KNOWS*]-(p2))
WITH collect(route) AS routes
UNWIND routes AS r
UNWIND relationships(r) AS hop
WITH routes, collect(DISTINCT hop) AS hops
UNWIND hops AS hop
WITH routes, hop, startNode(hop) AS x, endNode(hop) AS y
WITH routes, hop,
     COUNT { (x)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(m:Post) WHERE (m)-[:HAS_CREATOR]->(y) }
   + COUNT { (y)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(m:Post) WHERE (m)-[:HAS_CREATOR]->(x) } AS toPosts,
     COUNT { (x)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(m:Comment) WHERE (m)-[:HAS_CREATOR]->(y) }
   + COUNT { (y)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(m:Comment) WHERE (m)-[:HAS_CREATOR]->(x) } AS toComments
WITH routes, collect([hop, toPosts * 1.0 + toComments * 0.5]) AS weights
UNWIND routes AS route
RETURN [n IN nodes(route) | n.id] AS personIdsInPath,
       reduce(w = 0.0, k IN relationships(route) | w + [e IN weights WHERE e[0] = k][0][1]) AS pathWeight
ORDER BY pathWeight DESC
