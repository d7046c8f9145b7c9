import t from 'tap'
import { errors, problemType, REQUEST_ERROR_CODES, titleOf } from '../../lib/common/errors.js'

t.test('every error is keyed by its own code', async (t) => {
  for (const [key, ErrorClass] of Object.entries(errors)) {
    t.equal(new ErrorClass('x').code, key, key)
  }
})

t.test('every request error has a title and a URN type', async (t) => {
  for (const code of REQUEST_ERROR_CODES) {
    t.ok(titleOf(code).length > 0, code)
    t.match(problemType(code), /^urn:fastify-password-auth:problem:[a-z-]+$/, code)
  }
  t.equal(problemType('FST_PWAUTH_INVALID_CREDENTIALS'), 'urn:fastify-password-auth:problem:invalid-credentials')
})
