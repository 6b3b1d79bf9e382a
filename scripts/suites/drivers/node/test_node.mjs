// The official JavaScript driver (neo4j-driver 6.x) against `rhizome serve`.
// The suite script passes the server's address in RHIZOME_BOLT (host:port).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import neo4j from 'neo4j-driver'

const address = process.env.RHIZOME_BOLT
const driver = neo4j.driver(`neo4j://${address}`, neo4j.auth.basic('neo4j', 'unused'), {
  disableLosslessIntegers: true
})
after(() => driver.close())

const tag = 'Js' + Math.random().toString(36).slice(2, 10)

test('connects over Bolt 5.4', async () => {
  const info = await driver.getServerInfo()
  const version = info.protocolVersion
  assert.equal(typeof version === 'number' ? version : `${version.major}.${version.minor}`, typeof version === 'number' ? 5.4 : '5.4')
  assert.match(info.agent, /^Neo4j\/5/)
})

test('parameters of every type round trip', async () => {
  const session = driver.session()
  try {
    const values = {
      null: null,
      bool: false,
      int: 123456789,
      float: 2.5,
      string: 'héllo',
      list: [1, 'two', null, [3]],
      map: { a: 1, b: { c: [true] } },
      date: new neo4j.types.Date(2024, 2, 29),
      localTime: new neo4j.types.LocalTime(13, 14, 15, 123456789),
      time: new neo4j.types.Time(13, 14, 15, 5, 7200),
      localDateTime: new neo4j.types.LocalDateTime(2020, 1, 2, 3, 4, 5, 6),
      dateTimeOffset: new neo4j.types.DateTime(2020, 1, 2, 3, 4, 5, 6, -18000),
      dateTimeZone: new neo4j.types.DateTime(2022, 7, 1, 9, 30, 0, 0, undefined, 'Europe/Stockholm'),
      duration: new neo4j.types.Duration(14, 3, 7, 9)
    }
    for (const [name, value] of Object.entries(values)) {
      const result = await session.run('RETURN $v AS v', { v: value })
      const got = result.records[0].get('v')
      if (name === 'dateTimeZone') {
        // The server adds the offset it resolved for the zone.
        assert.equal(got.timeZoneId, 'Europe/Stockholm')
        assert.equal(got.timeZoneOffsetSeconds, 7200)
        assert.equal(got.hour, 9)
      } else {
        assert.equal(String(got), String(value), name)
      }
    }
    const zoned = await session.run('RETURN toString($v) AS s', { v: values.dateTimeZone })
    assert.equal(zoned.records[0].get('s'), '2022-07-01T09:30+02:00[Europe/Stockholm]')
  } finally {
    await session.close()
  }
})

test('nodes, relationships and paths come back as the driver types', async () => {
  const session = driver.session()
  try {
    const result = await session.run(
      "MATCH p = (a:Person)-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) RETURN a, r, m, p LIMIT 1"
    )
    const record = result.records[0]
    const [a, r, m, p] = ['a', 'r', 'm', 'p'].map(k => record.get(k))
    assert.ok(neo4j.isNode(a) && a.labels.includes('Person'))
    assert.ok(neo4j.isRelationship(r) && r.type === 'ACTED_IN')
    assert.equal(r.startNodeElementId, a.elementId)
    assert.equal(r.endNodeElementId, m.elementId)
    assert.ok(neo4j.isPath(p) && p.length === 1)
    assert.equal(p.segments[0].relationship.type, 'ACTED_IN')
    assert.equal(m.properties.title, 'The Matrix')
  } finally {
    await session.close()
  }
})

test('explicit transactions commit and roll back', async () => {
  const session = driver.session()
  try {
    const tx = await session.beginTransaction()
    await tx.run(`CREATE (:${tag} {k: 'committed'})`)
    await tx.commit()
    const rolledBack = await session.beginTransaction()
    await rolledBack.run(`CREATE (:${tag} {k: 'rolled back'})`)
    await rolledBack.rollback()
    const result = await session.run(`MATCH (n:${tag}) RETURN n.k AS k`)
    assert.deepEqual(result.records.map(r => r.get('k')), ['committed'])
  } finally {
    await session.close()
  }
})

test('managed transactions', async () => {
  const session = driver.session()
  try {
    const name = await session.executeWrite(async tx => {
      const result = await tx.run(`CREATE (n:${tag}Managed {name: $name}) RETURN n.name AS name`, { name: 'm1' })
      return result.records[0].get('name')
    })
    assert.equal(name, 'm1')
    const count = await session.executeRead(async tx => {
      const result = await tx.run(`MATCH (n:${tag}Managed) RETURN count(n) AS c`)
      return result.records[0].get('c')
    })
    assert.equal(count, 1)
    const { records } = await driver.executeQuery('RETURN 1 AS x')
    assert.equal(records[0].get('x'), 1)
  } finally {
    await session.close()
  }
})

test('a lock timeout is retried by executeWrite', async () => {
  // Another transaction holds the writer lock for longer than the server's
  // 5 s lock wait: the first attempt fails with the transient
  // LockAcquisitionTimeout and the driver runs the work again.
  const holder = driver.session()
  const held = await holder.beginTransaction()
  await held.run(`CREATE (:${tag}Lock)`)
  const released = new Promise((resolve, reject) => setTimeout(() => {
    held.commit().then(() => holder.close()).then(resolve, reject)
  }, 6000))
  const started = Date.now()
  let attempts = 0
  const session = driver.session()
  try {
    await session.executeWrite(async tx => {
      attempts += 1
      await tx.run(`CREATE (:${tag}Lock)`)
    })
  } finally {
    await session.close()
  }
  await released
  assert.ok(Date.now() - started > 5000, 'the write did not wait for the lock')
  assert.ok(attempts >= 2, `executeWrite ran ${attempts} time(s)`)
  const { records } = await driver.executeQuery(`MATCH (n:${tag}Lock) RETURN count(n) AS c`)
  assert.equal(records[0].get('c'), 2)
})

test('errors carry Neo4j codes', async () => {
  const session = driver.session()
  try {
    await assert.rejects(session.run('MATCH (n RETURN n'), e => e.code === 'Neo.ClientError.Statement.SyntaxError')
    await assert.rejects(session.run('RETURN $missing'), e => e.code === 'Neo.ClientError.Statement.ParameterMissing')
  } finally {
    await session.close()
  }
})

test('a million rows stream with a small fetch size', async () => {
  const session = driver.session({ fetchSize: 1000 })
  try {
    let count = 0
    let total = 0
    await new Promise((resolve, reject) => {
      session.run('UNWIND range(1, 1000000) AS i RETURN i').subscribe({
        onNext: record => { count += 1; total += record.get(0) },
        onCompleted: resolve,
        onError: reject
      })
    })
    assert.equal(count, 1000000)
    assert.equal(total, 1000000 * 1000001 / 2)
  } finally {
    await session.close()
  }
})

test('closing the session cancels the query', async () => {
  const session = driver.session({ fetchSize: 100 })
  const result = session.run('UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN a * b AS x')
  let seen = 0
  await new Promise((resolve, reject) => {
    const subscription = result.subscribe({
      onNext: () => { seen += 1; if (seen === 3) resolve() },
      onCompleted: resolve,
      onError: reject
    })
    void subscription
  })
  const started = Date.now()
  await session.close()
  assert.ok(Date.now() - started < 5000, 'closing took too long')
  const other = driver.session()
  try {
    const answer = await other.run('RETURN 42 AS x')
    assert.equal(answer.records[0].get('x'), 42)
  } finally {
    await other.close()
  }
})

test('what tools call on connect', async () => {
  const session = driver.session({ database: 'neo4j' })
  try {
    const dbs = await session.run('SHOW DATABASES')
    assert.equal(dbs.records[0].get('name'), 'neo4j')
    const components = await session.run('CALL dbms.components()')
    assert.match(components.records[0].get('versions')[0], /^5\./)
    const labels = await session.run('CALL db.labels()')
    assert.ok(labels.records.map(r => r.get('label')).includes('Movie'))
  } finally {
    await session.close()
  }
})
