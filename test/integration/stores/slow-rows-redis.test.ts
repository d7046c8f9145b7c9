import t from 'tap'
import { RedisAttemptStore } from '../../../lib/stores/redis/index.js'
import { deleteKeys, redisClient, redisUnavailable } from '../../helpers/services.js'
import { slowRowAttack } from '../../helpers/slow-rows.js'

t.test('the slow-row attack on the Redis attempt store: at most 5 of the victim\'s guesses are verified', { skip: redisUnavailable }, async (t) => {
  const client = redisClient(t)
  const prefix = `slow-rows-${process.pid}-${Date.now().toString(36)}:`
  t.teardown(async () => { await deleteKeys(client, prefix) })
  await slowRowAttack(t, new RedisAttemptStore({ client, prefix }))
})
