MATCH (p:Person {id: $personId})-[:WORK_AT]->(c) WITH p, collect(c) AS cs
MATCH (p)-[:KNOWS]-(s:Person) WHERE EXISTS { MATCH (s)-[:KNOWS*1..4]-(:Person)-[:WORK_AT]->(c2) WHERE c2 IN cs }
RETURN DISTINCT s.id LIMIT $n
