module github.com/chime-scheduler/chime

go 1.26
