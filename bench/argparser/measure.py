# CPU time per start-up of the two programs (bench/RESULTS.md, "The command-line parser on a lean binary").
# Build first: swift build -c release --static-swift-stdlib (in this directory).
import os, statistics, subprocess
args = ["--framing","ndjson","--clock","manual","--log-level","error","--max-message-bytes","65536","--backend","embedded","--timeout-ms","1000"]
def cpu(binary, n=60):
    ts=[]
    for _ in range(n):
        p = subprocess.Popen([binary,*args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'); p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        ts.append((ru.ru_utime+ru.ru_stime)*1000)
    return statistics.median(ts)
for b in ("withoutAP","withAP","withoutAP","withAP"):
    print(b, "cpu median %.2f ms" % cpu(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".build/release", b)))
