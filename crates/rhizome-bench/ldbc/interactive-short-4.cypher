// LDBC SNB Interactive IS4, Rhizome's formulation: creation date and text
// (or image file) of one message.
MATCH (msg:Message)
WHERE msg.id = $messageId
RETURN msg.creationDate AS messageCreationDate,
       coalesce(msg.content, msg.imageFile) AS messageContent
