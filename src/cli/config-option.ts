/** `--config`, which every command takes, the hook path's `enqueue` included (`enqueue-options.ts`). */
export const configOption = {
  config: { type: 'string', description: 'replication.config to use (default: $REFRELAY_CONFIG, then ./replication.config)' },
} as const;
