// neostandard (the Fastify organisation's ESLint setup) for lib, test and example: `npm run lint`.
// Kept under .ci/ so the package's top level holds only its own files.
import neostandard from 'neostandard'

export default neostandard({ ts: true })
