// LDBC SNB Interactive IC3, Rhizome's formulation: friends and friends of
// friends living outside countries X and Y who posted messages located in
// both X and Y during [$startDate, $endDate), with the counts per country.
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person)
WHERE contact <> start
WITH DISTINCT contact
MATCH (contact)-[:IS_LOCATED_IN]->(:City)-[:IS_PART_OF]->(home:Country)
WHERE NOT home.name IN [$countryXName, $countryYName]
MATCH (contact)<-[:HAS_CREATOR]-(msg:Message)-[:IS_LOCATED_IN]->(place:Country)
WHERE place.name IN [$countryXName, $countryYName]
  AND $startDate <= msg.creationDate < $endDate
WITH contact,
     sum(CASE WHEN place.name = $countryXName THEN 1 ELSE 0 END) AS xCount,
     sum(CASE WHEN place.name = $countryYName THEN 1 ELSE 0 END) AS yCount
WHERE xCount > 0 AND yCount > 0
RETURN contact.id AS friendId,
       contact.firstName AS friendFirstName,
       contact.lastName AS friendLastName,
       xCount,
       yCount,
       xCount + yCount AS xyCount
ORDER BY xyCount DESC, friendId ASC
LIMIT 20
