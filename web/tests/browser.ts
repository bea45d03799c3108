// Debian's chromium, never a downloaded one (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD).
export const kChromium = process.env.APOLLO_CHROMIUM ?? '/usr/bin/chromium';
export const kChromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
