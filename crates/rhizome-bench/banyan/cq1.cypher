MATCH (p:Person {id: $personId})-[:KNOWS*5]-(f:Person)
RETURN DISTINCT f.id LIMIT $n
