// LDBC SNB Interactive IS3, Rhizome's formulation: everyone the person
// knows, newest friendship first.
MATCH (:Person {id: $personId})-[k:KNOWS]-(other:Person)
RETURN other.id AS personId,
       other.firstName AS firstName,
       other.lastName AS lastName,
       k.creationDate AS friendshipCreationDate
ORDER BY friendshipCreationDate DESC, personId ASC
