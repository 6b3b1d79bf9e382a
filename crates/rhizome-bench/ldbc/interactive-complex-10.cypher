// LDBC SNB Interactive IC10, Rhizome's formulation: friends of friends (not
// friends, not the person) born between the 21st of $month and the 21st of
// the next month, scored by posts on the person's interests minus other
// posts. Birthdays are epoch milliseconds.
MATCH (start:Person {id: $personId})-[:KNOWS]-(:Person)-[:KNOWS]-(fof:Person)
WHERE fof <> start AND NOT EXISTS { (fof)-[:KNOWS]-(start) }
WITH DISTINCT start, fof
WITH start, fof, datetime({epochMillis: fof.birthday}) AS born
WHERE (born.month = $month AND born.day >= 21)
   OR (born.month = $month % 12 + 1 AND born.day < 22)
MATCH (fof)-[:IS_LOCATED_IN]->(home:City)
WITH start, fof, home,
     COUNT { (fof)<-[:HAS_CREATOR]-(:Post) } AS posts,
     COUNT { (fof)<-[:HAS_CREATOR]-(p:Post) WHERE EXISTS { (p)-[:HAS_TAG]->(:Tag)<-[:HAS_INTEREST]-(start) } } AS onTopic
RETURN fof.id AS personId,
       fof.firstName AS personFirstName,
       fof.lastName AS personLastName,
       2 * onTopic - posts AS commonInterestScore,
       fof.gender AS personGender,
       home.name AS personCityName
ORDER BY commonInterestScore DESC, personId ASC
LIMIT 10
