//go:build linux

// Package prefault maps the recall binary's code and read-only data into
// the process in one call at start, instead of one page fault per page as
// the code first runs. Import it for its side effect, as early as possible.
//
// A CLI command is a process of its own, and its first touch of each page
// of the binary is a fault: on the 2-core VM docs/benchmarks.md measures
// on, a fault on a mapped file's page costs 26-28 µs, and mapping the same
// pages in bulk (madvise MADV_POPULATE_READ) 0.2-0.3 µs a page
// (tools/pagecost). Mapping the whole 19 MB binary in takes 0.7-1.3 ms;
// `recall version` went from 18.2 to 16.7 ms, and a CLI search at 845k
// parts from 66.9 / 88.1 to 62.0 / 79.3 ms p50 / p95 with the lazily
// opened history of the same change (docs/benchmarks.md, "What a CLI
// process pays besides its search").
package prefault

import "syscall"

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): the kernel maps
// every page of the range, reading what is not in the page cache.
const madvPopulateRead = 22

// The init maps the binary in on a goroutine of its own, so on the
// machine's other core while the packages' inits go on (a page one of
// them touches before it is mapped faults in as it would have): 0.6-1 ms
// of `recall version` on the VM above (a CLI search: within the noise).
func init() {
	go func() {
		defer close(started)
		populated = Populate()
	}()
}

var (
	started   = make(chan struct{}) // closed when the init's Populate is done
	populated int
)

// Populated waits for the init's Populate and returns how many bytes it
// mapped in (0 where the kernel cannot, or /proc is not there).
func Populated() int {
	<-started
	return populated
}

// Populate maps in the read-only mappings of the running executable
// (its text and rodata, as /proc/self/maps lists them) and returns how
// many bytes it mapped in.
func Populate() (mapped int) {
	var buf [4096]byte
	n, err := syscall.Readlink("/proc/self/exe", buf[:])
	if err != nil || n == len(buf) {
		return
	}
	exe := string(buf[:n])
	maps, err := readFile("/proc/self/maps")
	if err != nil {
		return
	}
	for len(maps) > 0 {
		line := maps
		if i := indexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		lo, hi, perms, path, ok := parseLine(line)
		if !ok || perms[0] != 'r' || perms[1] == 'w' || path != exe {
			continue
		}
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateRead)
		if e != 0 {
			return // an older kernel: the pages fault in as before
		}
		mapped += int(hi - lo)
	}
	return mapped
}

// parseLine splits one line of /proc/self/maps:
// "lo-hi perms offset dev inode   path".
func parseLine(line []byte) (lo, hi uintptr, perms []byte, path string, ok bool) {
	var f [6][]byte
	n := 0
	for i := 0; i < len(line) && n < 6; {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		if n == 5 {
			j = len(line) // the path may hold spaces
		} else {
			for j < len(line) && line[j] != ' ' {
				j++
			}
		}
		f[n] = line[i:j]
		n++
		i = j
	}
	if n < 5 || len(f[1]) < 4 {
		return 0, 0, nil, "", false
	}
	dash := indexByte(f[0], '-')
	if dash < 0 {
		return 0, 0, nil, "", false
	}
	if lo, ok = hex(f[0][:dash]); !ok {
		return
	}
	if hi, ok = hex(f[0][dash+1:]); !ok || hi <= lo {
		return 0, 0, nil, "", false
	}
	return lo, hi, f[1], string(f[5]), true
}

func hex(b []byte) (uintptr, bool) {
	var v uintptr
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, len(b) > 0
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// readFile reads a small /proc file with syscalls alone, so the package
// depends on nothing that runs an init of its own before it.
func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 16<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
