set -u
./build/kwb list --markdown > "$OUT/catalogue.md"
cp "$OUT/catalogue.md" docs/catalogue.md
cmake --build --preset default -j 16 --target kwb_tests > "$OUT/cpu-build.log" 2>&1 || tail -20 "$OUT/cpu-build.log"
./build/tests/kwb_tests --gtest_brief=1 2>&1 | tail -6
./build/kwb run --op newton_schulz --shapes edge --preset verify --mode hot --datasheet-ceilings --out "$OUT/nse" > "$OUT/nse.txt" 2>&1; echo "ns edge exit $?"; grep -E " failed " "$OUT/nse.txt" | head -5; tail -2 "$OUT/nse.txt" | head -1
./build/kwb run --op newton_schulz --dtype bf16 --preset quick --axis rows=4096 --axis cols=4096 --out "$OUT/ns" > "$OUT/ns.txt" 2>&1; echo "ns exit $?"; sed -n '/^Speedup/,$p' "$OUT/ns.txt" | head -4
./build/kwb run --op attention_fwd --variant baseline_eager_cublaslt --dtype bf16 --preset verify --datasheet-ceilings --out "$OUT/attnv" > "$OUT/attnv.txt" 2>&1; echo "attn baseline verify exit $?"; tail -2 "$OUT/attnv.txt" | head -1
