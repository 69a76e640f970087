import type { ToolExtra } from './tool.js';

/** Progress goes out only when the caller asked for it with a progressToken, as the spec requires. */
export async function reportProgress(
  extra: ToolExtra,
  update: { progress: number; total?: number; message?: string },
): Promise<void> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return;
  await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, ...update } });
}
