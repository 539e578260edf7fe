package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// No container engine runs here (nor in CI): a container is run the way
// one is at its core, with the kernel's own means. The image's layers are
// unpacked into a root file system, made read-only but for /tmp, and the
// process starts chrooted into it, as the image's user, in a network
// namespace of its own (no interface but a loopback that is down): from a
// user namespace when the kernel lets anyone make one, else, as root, with
// a plain setuid. What it does not have of a container engine: cgroups,
// seccomp, a mount namespace with /proc and /dev (the programs need none).

// rootFS unpacks an image's file system into dir, and makes every
// directory but /tmp read-only, as readOnlyRootFilesystem does.
func rootFS(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var dirs []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(filepath.Clean("/"+h.Name)))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(p, fs.FileMode(h.Mode).Perm()|modeBits(h.Mode)); err != nil {
				return err
			}
			dirs = append(dirs, p)
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fs.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: entries of type %c are not expected in these images", h.Name, h.Typeflag)
		}
	}
	for _, d := range append(dirs, dir) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSticky == 0 { // /tmp keeps its 1777
			if err := os.Chmod(d, st.Mode().Perm()&^0o222); err != nil {
				return err
			}
		}
	}
	return nil
}

// modeBits are the sticky, setuid and setgid bits of a tar mode.
func modeBits(mode int64) fs.FileMode {
	var m fs.FileMode
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// writable makes a read-only root file system writable again, for removal.
func writable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// container is a process to run in a root file system.
type container struct {
	root     string
	user     string // UID[:GID]
	env      []string
	dir      string   // in the root file system
	argv     []string // argv[0] absolute in the root file system, or found in the env's PATH there
	in       io.Reader
	out, err io.Writer
}

// isolation says how the last run was isolated.
var isolation string

// run runs the process, isolated as the comment above says.
func (c container) run() error {
	uid, gid, err := ids(c.user)
	if err != nil {
		return err
	}
	path := c.argv[0]
	if !strings.HasPrefix(path, "/") {
		if path, err = lookPath(c.root, c.env, path); err != nil {
			return err
		}
	}
	mk := func(attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := &exec.Cmd{Path: path, Args: c.argv, Env: c.env, Dir: c.dir, Stdin: c.in, Stdout: c.out, Stderr: c.err, SysProcAttr: attr}
		return cmd
	}
	// Unprivileged: a user namespace in which the image's user is this
	// one, and a network namespace.
	cmd := mk(&syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getgid(), Size: 1}},
		Chroot:      c.root,
	})
	err = cmd.Start()
	isolation = "user namespace, network namespace, chroot"
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) {
		if os.Geteuid() != 0 {
			return fmt.Errorf("this kernel lets no one but root make a user namespace (%v): run the test as root, or allow them (sysctl kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0)", err)
		}
		cmd = mk(&syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWNET,
			Chroot:     c.root,
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true},
		})
		err = cmd.Start()
		isolation = "setuid, network namespace, chroot"
	}
	if err != nil {
		return err
	}
	return cmd.Wait()
}

// ids reads an image's user, UID[:GID], numeric as these images have it.
func ids(user string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(user, ":")
	if uid, err = strconv.Atoi(u); err != nil {
		return 0, 0, fmt.Errorf("user %q: not numeric", user)
	}
	gid = uid
	if ok {
		if gid, err = strconv.Atoi(g); err != nil {
			return 0, 0, fmt.Errorf("user %q: not numeric", user)
		}
	}
	return uid, gid, nil
}

// lookPath finds a command in the PATH of env, in the root file system.
func lookPath(root string, env []string, name string) (string, error) {
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				if st, err := os.Stat(filepath.Join(root, dir, name)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					return filepath.Join(dir, name), nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s: not in the image's PATH", name)
}
