// LDBC SNB Interactive IS1, Rhizome's formulation: a person's profile and
// the id of the city the person lives in.
MATCH (person:Person {id: $personId})-[:IS_LOCATED_IN]->(home:City)
RETURN person.firstName AS firstName,
       person.lastName AS lastName,
       person.birthday AS birthday,
       person.locationIP AS locationIP,
       person.browserUsed AS browserUsed,
       home.id AS cityId,
       person.gender AS gender,
       person.creationDate AS creationDate
