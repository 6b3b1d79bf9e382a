// LDBC SNB Interactive IC1, Rhizome's formulation: people with a given first
// name within 3 KNOWS hops, nearest first, with their city, universities
// ([name, class year, city]) and employers ([name, start year, country]).
MATCH (start:Person {id: $personId}), (candidate:Person {firstName: $firstName})
WHERE candidate <> start
MATCH hops = shortestPath((start)-[:KNOWS*1..3]-(candidate))
WITH candidate, length(hops) AS distance
ORDER BY distance ASC, candidate.lastName ASC, candidate.id ASC
LIMIT 20
MATCH (candidate)-[:IS_LOCATED_IN]->(home:City)
RETURN candidate.id AS friendId,
       candidate.lastName AS friendLastName,
       distance AS distanceFromPerson,
       candidate.birthday AS friendBirthday,
       candidate.creationDate AS friendCreationDate,
       candidate.gender AS friendGender,
       candidate.browserUsed AS friendBrowserUsed,
       candidate.locationIP AS friendLocationIp,
       candidate.email AS friendEmails,
       candidate.speaks AS friendLanguages,
       home.name AS friendCityName,
       [(candidate)-[s:STUDY_AT]->(u:University)-[:IS_LOCATED_IN]->(uc:City) | [u.name, s.classYear, uc.name]] AS friendUniversities,
       [(candidate)-[w:WORK_AT]->(c:Company)-[:IS_LOCATED_IN]->(cc:Country) | [c.name, w.workFrom, cc.name]] AS friendCompanies
ORDER BY distanceFromPerson ASC, friendLastName ASC, friendId ASC
