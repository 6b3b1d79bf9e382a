MATCH (p:Person {id: $personId})-[:KNOWS*1..2]-(f:Person) WHERE f <> p WITH DISTINCT f
WHERE EXISTS { (f)<-[:HAS_CREATOR]-(:Message)-[:HAS_TAG]->(:Tag)-[:HAS_TYPE]->(tc:TagClass) WHERE tc.name CONTAINS 'Country' }
RETURN f.id ORDER BY f.id LIMIT $n
