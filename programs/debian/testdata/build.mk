# programs/debian's make case (make -f build.mk, run in a directory with
# the prepared inputs): recipes that /bin/sh runs, with pipes and
# redirections, build three files from two inputs; a pattern rule, an
# automatic variable and a command that make runs without a shell.

export PATH := /usr/bin:/bin

all: summary.txt

%.upper: %.txt
	tr a-z A-Z < $< > $@

count.txt: words.txt
	sort words.txt | uniq -c | sort -k1,1nr -k2 | head -20 > $@

summary.txt: text.upper count.txt
	wc -l text.upper count.txt > $@
	head -3 count.txt >> $@
	sed -n '1,2p' text.upper >> $@
	cat $@

.PHONY: all
