import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import type { FastifySchemaCompiler } from 'fastify'
import { EMAIL_PATTERN } from '../stores/email.js'
import { requestError, type FieldError } from '../common/errors.js'
import { WELL_FORMED_PATTERN } from './schemas.js'

const PATTERN_DETAILS: Record<string, string> = {
  [EMAIL_PATTERN]: 'must be an e-mail address: 3 to 254 characters, one @ with text on both sides, no white space inside',
  [WELL_FORMED_PATTERN]: 'must be well-formed Unicode text (no lone surrogate)'
}

function detailOf (error: ValueError): string {
  const schema = error.schema as { minLength?: number, maxLength?: number, pattern?: string }
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty: return 'is required'
    case ValueErrorType.Object: return 'must be a JSON object'
    case ValueErrorType.String: return 'must be a string'
    case ValueErrorType.StringMinLength:
    case ValueErrorType.StringMaxLength: return `must be ${schema.minLength ?? 0} to ${schema.maxLength ?? 'any number of'} characters long`
    case ValueErrorType.StringPattern: return PATTERN_DETAILS[schema.pattern ?? ''] ?? 'has an invalid format'
    default: return 'is invalid'
  }
}

/** The body's failed rules, one per JSON pointer (the first one found). */
export function fieldErrors (errors: Iterable<ValueError>): FieldError[] {
  const byPointer = new Map<string, FieldError>()
  for (const error of errors) {
    if (!byPointer.has(error.path)) byPointer.set(error.path, { pointer: error.path, detail: detailOf(error) })
  }
  return [...byPointer.values()]
}

/**
 * The plugin's own validator compiler: TypeBox checks with no type coercion and no removal of fields,
 * failing with the contract's 400 and JSON pointers. A missing body arrives here as null.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const check = TypeCompiler.Compile(schema)
  return (data: unknown) => {
    if (check.Check(data)) return { value: data }
    if (data === null) return { error: requestError('FST_PWAUTH_MALFORMED_BODY') }
    return { error: requestError('FST_PWAUTH_VALIDATION', { errors: fieldErrors(check.Errors(data)) }) }
  }
}

/** A route's validator that checks `schema` instead of the one the route documents. */
export function validateAs (schema: TSchema): FastifySchemaCompiler<unknown> {
  return (route) => validatorCompiler({ ...route, schema })
}
