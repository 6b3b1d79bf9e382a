MATCH (p:Person {id: $personId})-[:WORK_AT]->(c) WITH p, collect(c) AS cs
MATCH (p)-[:KNOWS*1..5]-(f:Person) WHERE f <> p AND EXISTS { (f)-[:WORK_AT]->(c2) WHERE c2 IN cs }
RETURN DISTINCT f.id LIMIT $n
