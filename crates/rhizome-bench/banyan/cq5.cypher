MATCH (p:Person {id: $personId})-[:WORK_AT]->(c) WITH p, collect(c) AS cs
MATCH (p)-[:KNOWS*1..5]-(f:Person) WHERE f <> p AND EXISTS { (f)-[:WORK_AT]->(c2) WHERE c2 IN cs }
  AND EXISTS { (f)<-[:HAS_CREATOR]-(:Message)-[:HAS_TAG]->(:Tag)-[:HAS_TYPE]->(tc:TagClass) WHERE tc.name CONTAINS 'Country' }
RETURN DISTINCT f.id LIMIT $n
