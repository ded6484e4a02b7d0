package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"

	"github.com/crossfade-io/crossfade/internal/sandbox"
)

// The tests in this file run `crossfade cutover` processes from separate state
// directories, as two machines would: their flock locks cannot see each other, so only
// the authority record in the zone keeps them apart. They need no AWS CLI: the zone is
// created in the in-process sandbox, published by `crossfade sync`, and read with the SDK.

// sdkWeights lists app.example.com's A weights by set identifier, and the authority
// record's value ("" when there is none).
func sdkWeights(t *testing.T, sb *sandbox.Sandbox, zoneID string) (map[string]int, string) {
	t.Helper()
	out, err := sdkClient(sb.APIURL()).ListResourceRecordSets(context.Background(), &route53.ListResourceRecordSetsInput{HostedZoneId: aws.String(zoneID)})
	if err != nil {
		t.Fatal(err)
	}
	w := map[string]int{}
	authority := ""
	for _, s := range out.ResourceRecordSets {
		switch name := aws.ToString(s.Name); {
		case name == "app.example.com." && s.Type == "A" && s.Weight != nil:
			w[aws.ToString(s.SetIdentifier)] = int(*s.Weight)
		case name == "_crossfade-weights.app.example.com." && len(s.ResourceRecords) == 1:
			authority = aws.ToString(s.ResourceRecords[0].Value)
		}
	}
	return w, authority
}

// journalEntries reads a cutover's journal (JSON lines) from a state directory.
func journalEntries(t *testing.T, dir, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".journal"))
	if err != nil {
		return nil
	}
	var out []map[string]any
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		var e map[string]any
		if err := json.Unmarshal(lines.Bytes(), &e); err != nil {
			t.Fatalf("journal %s: %v", dir, err)
		}
		out = append(out, e)
	}
	return out
}

// journalToken is the runner token the journal's start entry recorded, "" if none.
func journalToken(t *testing.T, dir, name string) string {
	t.Helper()
	for _, e := range journalEntries(t, dir, name) {
		if e["kind"] == "start" {
			tok, _ := e["token"].(string)
			return tok
		}
	}
	return ""
}

// waitJournal waits until the journal in dir has an entry of kind.
func waitJournal(t *testing.T, dir, name, kind string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range journalEntries(t, dir, name) {
			if e["kind"] == kind {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("journal in %s: no %s entry after 30 s", dir, kind)
}

// raceRunners starts two runners of planFile (cutover name) from two state directories at
// once, as on two machines, and requires exactly one to win: it exits 0, the other exits
// 1 naming the winner's runner token and has no write in its journal. It returns the
// winner's token and state directory.
func raceRunners(t *testing.T, sb *sandbox.Sandbox, name, planFile string) (token, winnerDir string) {
	t.Helper()
	dirs := [2]string{t.TempDir(), t.TempDir()}
	var cmds [2]*exec.Cmd
	var outs [2]*bytes.Buffer
	for k := range dirs {
		cmds[k], outs[k] = cutoverCmd(t, sb, dirs[k], "run", planFile)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	codes := [2]int{waitCmd(t, cmds[0], outs[0]), waitCmd(t, cmds[1], outs[1])}
	winner, loser := 0, 1
	if codes[1] == 0 {
		winner, loser = 1, 0
	}
	if codes[winner] != 0 || codes[loser] != 1 {
		t.Fatalf("%s: exit codes %v, want exactly one 0 and one 1:\n--- A\n%s\n--- B\n%s", name, codes, outs[0], outs[1])
	}
	token = journalToken(t, dirs[winner], name)
	if token == "" || !strings.Contains(outs[loser].String(), "held by another runner, runner "+token+"@") {
		t.Fatalf("%s: the loser's output does not name the winner's runner %q:\n%s", name, token, outs[loser])
	}
	for _, e := range journalEntries(t, dirs[loser], name) {
		if e["kind"] == "written" {
			t.Errorf("%s: the loser's journal has a write: %v", name, e)
		}
	}
	return token, dirs[winner]
}

// waitCmd waits for a started command, killing it after two minutes.
func waitCmd(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("crossfade %v did not finish:\n%s", cmd.Args[1:], out)
	}
	return cmd.ProcessState.ExitCode()
}

// TestCutoverTwoMachines starts `crossfade cutover run` of one plan twice at the same
// moment from two state directories, several times over: each time exactly one runs the
// cutover to its end, and the other exits 1 naming the winner's runner token, its journal
// showing no write. Then a cutover runs from machine A, and machine B, whose journal of
// the same cutover started with another token, aborts it: B takes the weights over and
// says so, A's runner is refused at its next write naming B's runner and writes nothing
// over B's rollback, and `release` from A needs --force to delete B's record.
func TestCutoverTwoMachines(t *testing.T) {
	sb, zoneID := safetyZone(t, 100, 0)
	const races = 5
	for i := range races {
		from, to := "blue", "green"
		if i%2 == 1 {
			from, to = to, from
		}
		name := fmt.Sprintf("race-%02d", i)
		planFile := cutoverPlan(t, sb, name, from, to)
		token, winnerDir := raceRunners(t, sb, name, planFile)
		w, authority := sdkWeights(t, sb, zoneID)
		if w[from] != 0 || w[to] != 100 || !strings.Contains(authority, "crossfade/runner="+token+"@") {
			t.Fatalf("race %d: weights %v, authority %s; want %s=0 %s=100 held by runner %s", i, w, authority, from, to, token)
		}
		t.Logf("race %d: %s → %s, runner %s won", i, from, to, token)
		// As an operator would: each publisher's source set to the weight the zone now
		// holds and synced (which confirms the hold), then a plain release.
		syncMember(t, sb, from, 0)
		syncMember(t, sb, to, 100)
		if out, code := runCutover(t, sb, winnerDir, "release", planFile); code != 0 {
			t.Fatalf("race %d: release: %s", i, out)
		}
	}

	// The takeover. After an odd number of races blue holds the traffic again.
	from, to := "blue", "green"
	if races%2 == 1 {
		from, to = to, from
	}
	planFile := cutoverPlan(t, sb, "takeover", from, to)
	writeFile(t, planFile, strings.Replace(readFile(t, planFile), "pause: 1s", "pause: 1h", 1))
	dirA, dirB := t.TempDir(), t.TempDir()
	cmdA, outA := cutoverCmd(t, sb, dirA, "run", planFile)
	if err := cmdA.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmdA.Process.Kill(); cmdA.Wait() })
	waitJournal(t, dirA, "takeover", "insync")
	tokenA := journalToken(t, dirA, "takeover")
	// Machine B's journal of the cutover, as a runner that started there left it.
	start := fmt.Sprintf(`{"seq":1,"time":%q,"kind":"start","step":-1,"weights":{%q:100,%q:0},"ttl":1,"token":"b0b0b0b0b0b0b0b0"}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), from, to)
	writeFile(t, filepath.Join(dirB, "takeover.journal"), start)
	out, code := runCutover(t, sb, dirB, "abort", planFile)
	if code != 0 || !strings.Contains(out, "took the weights over from runner "+tokenA+"@") || !strings.Contains(out, "rolled-back") {
		t.Fatalf("abort from B exited %d, want a rollback that says it took over from runner %s:\n%s", code, tokenA, out)
	}
	if w, authority := sdkWeights(t, sb, zoneID); w[from] != 100 || w[to] != 0 || !strings.Contains(authority, "runner=b0b0b0b0b0b0b0b0@") {
		t.Fatalf("after B's abort: weights %v, authority %s", w, authority)
	}
	if out, code := runCutover(t, sb, dirA, "promote", planFile); code != 0 {
		t.Fatalf("promote A: %s", out)
	}
	if code := waitCmd(t, cmdA, outA); code != 1 || !strings.Contains(outA.String(), "held by another runner, runner b0b0b0b0b0b0b0b0@") {
		t.Fatalf("A after the takeover exited %d, want 1 naming B's runner:\n%s", code, outA)
	}
	if w, _ := sdkWeights(t, sb, zoneID); w[from] != 100 || w[to] != 0 {
		t.Fatalf("after A's refused write: weights %v, want B's rollback kept", w)
	}
	if out, code := runCutover(t, sb, dirA, "release", planFile); code == 0 || !strings.Contains(out, "unfinished") {
		t.Errorf("release from A without --force exited %d:\n%s", code, out)
	}
	out, code = runCutover(t, sb, dirA, "release", planFile, "--force")
	if code != 0 || !strings.Contains(out, "took the weights over from runner b0b0b0b0b0b0b0b0@") || !strings.Contains(out, "1 authority records deleted") {
		t.Fatalf("release --force from A exited %d:\n%s", code, out)
	}
	if _, authority := sdkWeights(t, sb, zoneID); authority != "" {
		t.Errorf("authority record %s still there after release --force", authority)
	}
}
