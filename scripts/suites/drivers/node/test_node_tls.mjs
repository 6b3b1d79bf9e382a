// The JavaScript driver (neo4j-driver 6.x) over TLS: the suite script
// starts `rhizome serve --tls-cert --tls-key` with a certificate it made
// and passes the Bolt port in RHIZOME_BOLT_TLS_PORT and the certificate in
// RHIZOME_TLS_CERT.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import neo4j from 'neo4j-driver'

const port = process.env.RHIZOME_BOLT_TLS_PORT
const cert = process.env.RHIZOME_TLS_CERT
const auth = neo4j.auth.basic('neo4j', 'unused')

test('encrypted with the certificate trusted', async () => {
  const driver = neo4j.driver(`bolt://localhost:${port}`, auth, {
    encrypted: 'ENCRYPTION_ON',
    trust: 'TRUST_CUSTOM_CA_SIGNED_CERTIFICATES',
    trustedCertificates: [cert],
    disableLosslessIntegers: true
  })
  try {
    await driver.verifyConnectivity()
    const { records } = await driver.executeQuery("RETURN 'over tls' AS s, 40 + 2 AS n")
    assert.equal(records[0].get('s'), 'over tls')
    assert.equal(records[0].get('n'), 42)
  } finally {
    await driver.close()
  }
})

test('an untrusted certificate is refused', async () => {
  const driver = neo4j.driver(`bolt://localhost:${port}`, auth, {
    encrypted: 'ENCRYPTION_ON',
    trust: 'TRUST_SYSTEM_CA_SIGNED_CERTIFICATES',
    connectionTimeout: 5000
  })
  try {
    await assert.rejects(driver.verifyConnectivity())
  } finally {
    await driver.close()
  }
})
