// The JavaScript driver against `rhizome serve --auth basic`: logins, roles.
// The suite script starts this server with `--initial-password admin-pw` on
// a database of its own and passes its address in RHIZOME_BOLT_AUTH.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import neo4j from 'neo4j-driver'

const uri = `neo4j://${process.env.RHIZOME_BOLT_AUTH}`
const admin = neo4j.driver(uri, neo4j.auth.basic('neo4j', 'admin-pw'), { disableLosslessIntegers: true })
after(() => admin.close())

before(async () => {
  for (const statement of [
    "CREATE USER reader_js IF NOT EXISTS SET PASSWORD 'r-pw' CHANGE NOT REQUIRED",
    'GRANT ROLE reader TO reader_js'
  ]) {
    await admin.executeQuery(statement)
  }
})

test('the administrator connects with its password', async () => {
  await admin.verifyConnectivity()
  const { records } = await admin.executeQuery('SHOW CURRENT USER')
  assert.equal(records[0].get('username'), 'neo4j')
  assert.deepEqual(records[0].get('roles'), ['admin'])
})

test('a wrong password is refused', async () => {
  const intruder = neo4j.driver(uri, neo4j.auth.basic('reader_js', 'wrong'))
  try {
    await assert.rejects(intruder.verifyConnectivity(), e => e.code === 'Neo.ClientError.Security.Unauthorized')
  } finally {
    await intruder.close()
  }
})

test('a reader reads but is refused a write', async () => {
  const reader = neo4j.driver(uri, neo4j.auth.basic('reader_js', 'r-pw'), { disableLosslessIntegers: true })
  const session = reader.session()
  try {
    const read = await session.run('RETURN 1 AS x')
    assert.equal(read.records[0].get('x'), 1)
    await assert.rejects(session.run('CREATE (:ReaderWriteJs)'), e => e.code === 'Neo.ClientError.Security.Forbidden')
    // A managed write is not retried: Forbidden is not transient.
    const started = Date.now()
    await assert.rejects(
      session.executeWrite(tx => tx.run('CREATE (:ReaderWriteJs)')),
      e => e.code === 'Neo.ClientError.Security.Forbidden'
    )
    assert.ok(Date.now() - started < 3000, 'a forbidden write was retried')
  } finally {
    await session.close()
    await reader.close()
  }
  const { records } = await admin.executeQuery('MATCH (n:ReaderWriteJs) RETURN count(n) AS c')
  assert.equal(records[0].get('c'), 0)
})
