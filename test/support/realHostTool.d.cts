import type { OptionalTool } from './optionalTool.cjs';

export const realHostTool: OptionalTool;
