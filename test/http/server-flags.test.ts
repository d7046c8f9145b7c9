import { readFileSync } from 'node:fs'
import t from 'tap'
import { EXAMPLE_SERVER_NODE_FLAGS } from '../../example/node-process.js'
import { repoPath } from '../helpers/root.js'

t.test('npm start runs the example server with the flags the bench and the tests give it', async (t) => {
  const { scripts } = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.equal(scripts.start, `node ${EXAMPLE_SERVER_NODE_FLAGS.join(' ')} dist/example/server.js`)
})
