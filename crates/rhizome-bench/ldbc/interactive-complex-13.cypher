// LDBC SNB Interactive IC13, Rhizome's formulation: the length of a
// shortest KNOWS path between two people, -1 when there is none.
MATCH (p1:Person {id: $person1Id}), (p2:Person {id: $person2Id})
OPTIONAL MATCH route = shortestPath((p1)-[:KNOWS*]-(p2))
RETURN coalesce(length(route), -1) AS shortestPathLength
