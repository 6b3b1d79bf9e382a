// LDBC SNB Interactive IC14, Rhizome's formulation: all shortest KNOWS paths
// between two people, weighted per consecutive pair by their interactions:
// 1.0 for each comment of one replying to a post of the other, 0.5 for each
// comment of one replying to a comment of the other.
MATCH (p1:Person {id: $person1Id}), (p2:Person {id: $person2Id})
MATCH route = allShortestPaths((p1)-[:KNOWS*]-(p2))
UNWIND relationships(route) AS hop
WITH route, startNode(hop) AS x, endNode(hop) AS y
WITH route,
     COUNT { (x)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Post)-[:HAS_CREATOR]->(y) }
   + COUNT { (y)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Post)-[:HAS_CREATOR]->(x) } AS toPosts,
     COUNT { (x)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Comment)-[:HAS_CREATOR]->(y) }
   + COUNT { (y)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Comment)-[:HAS_CREATOR]->(x) } AS toComments
WITH route, sum(toPosts * 1.0 + toComments * 0.5) AS weight
RETURN [n IN nodes(route) | n.id] AS personIdsInPath, weight AS pathWeight
ORDER BY pathWeight DESC
