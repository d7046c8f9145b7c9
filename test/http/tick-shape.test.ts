import { executionAsyncResource } from 'node:async_hooks'
import t from 'tap'
import { fullCollection } from '../../example/flood-memory.js'
import { pinnedTickObject } from '../../lib/http/tick-shape.js'
import { buildTestApp } from '../helpers/app.js'

const tickObject = async (): Promise<object> => await new Promise((resolve) => { process.nextTick(() => { resolve(executionAsyncResource()) }) })

t.test('registering the plugin keeps one tick object of process.nextTick alive through full collections', async (t) => {
  t.equal(pinnedTickObject(), undefined, 'nothing is pinned before a registration')
  const { app } = await buildTestApp(t)
  await tickObject()
  const pinned = pinnedTickObject()
  t.ok(pinned !== undefined, 'pinned once the next tick ran')
  t.same(Reflect.ownKeys(pinned!), Reflect.ownKeys(await tickObject()), 'it has the shape of every tick object (its async ids, callback and args)')
  t.not(pinned, await tickObject(), 'a tick object of its own, not the one a later tick runs with')

  const held = new WeakRef(pinned!)
  const dropped = new WeakRef(await tickObject())
  for (let i = 0; i < 3; i++) {
    fullCollection()
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal(dropped.deref(), undefined, 'an ordinary tick object is gone after full collections (the test can see a collection)')
  t.equal(held.deref(), pinned, 'the pinned one stays, and with it its maps')

  await buildTestApp(t)
  await tickObject()
  t.equal(pinnedTickObject(), pinned, 'a second registration pins nothing more')
  await app.close()
})
