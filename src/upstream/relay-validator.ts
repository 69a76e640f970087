import type { jsonSchemaValidator, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * The shim relays tool results; checking them against a tool's `outputSchema` is the end
 * client's job, which sees the same schema. The SDK client would otherwise build an Ajv instance
 * (with every format) per upstream client and compile each tool's schema on every `tools/list`:
 * the largest CPU cost of task creation in our profiles (docs/benchmarks.md).
 */
export const relayValidator: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};
