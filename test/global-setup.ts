// Black-box tests start the compiled CLI, so build once before any test file runs.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  for (const tool of ['ffmpeg', 'ffprobe']) {
    try {
      execFileSync(tool, ['-version'], { stdio: 'ignore' });
    } catch {
      throw new Error(`${tool} is not installed: run \`make setup\` first`);
    }
  }
}
