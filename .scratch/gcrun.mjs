const [tree, factory, args, n] = process.argv.slice(2);
const v = await import(`${tree}/bench/.build/bench/variants.js`);
const op = await v[factory](...JSON.parse(args));
for (let i = 0; i < 10000; i++) await op();
console.log("MEASURE");
const t = process.cpuUsage();
for (let i = 0; i < Number(n); i++) await op();
const u = process.cpuUsage(t); console.log("CPU", (u.user + u.system) / Number(n));
