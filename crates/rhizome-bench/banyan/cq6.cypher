MATCH path = (p:Person {id: $personId})-[:KNOWS*5]-(f:Person)
WHERE all(x IN nodes(path)[1..] WHERE EXISTS { (x)<-[:HAS_CREATOR]-(:Message)-[:HAS_TAG]->(:Tag)-[:HAS_TYPE]->(tc:TagClass) WHERE tc.name CONTAINS 'Country' })
RETURN DISTINCT f.id LIMIT $n
