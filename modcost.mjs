const mods = process.argv.slice(2);
const rss = () => process.memoryUsage().rss / 1048576;
global.gc?.(); const base = rss();
for (const m of mods) { await import(m); }
global.gc?.(); await new Promise(r=>setTimeout(r,200)); global.gc?.();
const mu = process.memoryUsage();
console.log(mods.join(',').padEnd(50), (rss()-base).toFixed(1), 'heapUsed', (mu.heapUsed/1048576).toFixed(1));
