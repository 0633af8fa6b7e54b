//go:build unix

package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// The rules for the files Recall keeps (the index, its -wal, -shm and
// journal, the writer lock) and the directory holding them are OpenSSH's
// StrictModes for a private key: the file is a regular file (never a
// symlink: a link lets whoever controls it point Recall's writes, or a
// chmod, at another file), owned by the current user, with no group or
// other bits; the directory is owned by the user (or root) and writable by
// no one else, since whoever can write it can plant or swap those files.
// A directory that is Recall's own (the default index directory, which it
// creates 0700) must not be readable by others either.

// openNoFollow opens path without following a final symlink.
func openNoFollow(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, 0)
}

func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// uidName is "uid N (name)" for messages.
func uidName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// checkOwnFile checks one of the index's files (fi from Lstat); ixPath is
// the index path the refusal is about.
func checkOwnFile(ixPath, path string, fi fs.FileInfo) error {
	refuse := func(reason, fix string) error { return &RefusedError{Path: ixPath, Reason: reason, Fix: fix} }
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(fmt.Sprintf("%s is a symbolic link, and Recall never follows one to a file it writes", path),
			"pass the real path of a file of your own (or a new path) instead")
	case !fi.Mode().IsRegular():
		return refuse(fmt.Sprintf("%s is not a regular file (%v)", path, fi.Mode().Type()), "pass another index path")
	}
	if uid, me := owner(fi), os.Geteuid(); uid != me {
		return refuse(fmt.Sprintf("%s belongs to %s, not to you (uid %d): another user's file could let them read your history", path, uidName(uid), me),
			fmt.Sprintf("remove it if you did not create it (rm %s), or pass another index path", path))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return refuse(fmt.Sprintf("%s has mode %s, so group/others can read or write it, and the index holds your history in original text", path, octal(fi.Mode())),
			fmt.Sprintf("run: chmod 600 %s", path))
	}
	return nil
}

// octal is a mode as chmod spells it, with the setuid/setgid/sticky digit
// (/tmp is 1777).
func octal(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}

// checkDir checks the directory that holds the index's files.
func checkDir(ixPath, dir string, private bool) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("index directory %s: %w", dir, err)
	}
	refuse := func(reason, fix string) error { return &RefusedError{Path: ixPath, Reason: reason, Fix: fix} }
	if !fi.IsDir() {
		return refuse(fmt.Sprintf("%s is not a directory", dir), "pass another index path")
	}
	uid, me, perm := owner(fi), os.Geteuid(), fi.Mode().Perm()
	ownDir := "pass an index path in a directory only you can write (mkdir -m 700 DIR), or none for the default"
	if uid != me && uid != 0 {
		return refuse(fmt.Sprintf("its directory %s belongs to %s, who could replace the index's files", dir, uidName(uid)), ownDir)
	}
	if perm&0o022 != 0 {
		fix := fmt.Sprintf("run: chmod 700 %s", dir)
		if uid != me || fi.Mode()&fs.ModeSticky != 0 {
			fix = ownDir // a shared directory such as /tmp: not one to chmod
		}
		return refuse(fmt.Sprintf("its directory %s has mode %s, so group/others could plant or replace the index's files", dir, octal(fi.Mode())), fix)
	}
	if private && perm&0o077 != 0 {
		return refuse(fmt.Sprintf("Recall's index directory %s has mode %s, so group/others can look inside", dir, octal(fi.Mode())),
			fmt.Sprintf("run: chmod 700 %s", dir))
	}
	return nil
}

// checkExisting checks an existing index path and the files beside it
// (missing ones are fine).
func checkExisting(ixPath string) error {
	fi, err := os.Lstat(ixPath)
	if err != nil {
		return fmt.Errorf("index %s: %w", ixPath, err)
	}
	if err := checkOwnFile(ixPath, ixPath, fi); err != nil {
		return err
	}
	return checkSideFiles(ixPath)
}

// sideSuffixes are the files SQLite and Recall keep beside the index.
var sideSuffixes = []string{"-wal", "-shm", "-journal", ".lock"}

func checkSideFiles(ixPath string) error {
	for _, suffix := range sideSuffixes {
		fi, err := os.Lstat(ixPath + suffix)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("index %s: %w", ixPath+suffix, err)
		}
		if err := checkOwnFile(ixPath, ixPath+suffix, fi); err != nil {
			return err
		}
	}
	return nil
}

// openOwnFile opens (creating with O_EXCL when missing) one of Recall's
// files beside the index, read-write, and checks the opened file itself,
// so a file swapped in between check and open is caught too.
func openOwnFile(ixPath, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		f, err = openNoFollow(path, os.O_RDWR)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			fi, lerr := os.Lstat(path)
			if lerr == nil {
				return nil, checkOwnFile(ixPath, path, fi)
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkOwnFile(ixPath, path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isReadOnlyErr reports an open for writing refused by read-only storage
// or by the file's own mode.
func isReadOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}
