// LDBC SNB Interactive IC11, Rhizome's formulation: friends and friends of
// friends who started working before $workFromYear at a company in
// country $countryName.
MATCH (start:Person {id: $personId})-[:KNOWS*1..2]-(contact:Person)
WHERE contact <> start
WITH DISTINCT contact
MATCH (contact)-[job:WORK_AT]->(employer:Company)-[:IS_LOCATED_IN]->(country:Country)
WHERE country.name = $countryName AND job.workFrom < $workFromYear
RETURN contact.id AS personId,
       contact.firstName AS personFirstName,
       contact.lastName AS personLastName,
       employer.name AS organizationName,
       job.workFrom AS organizationWorkFromYear
ORDER BY organizationWorkFromYear ASC, personId ASC, organizationName DESC
LIMIT 10
