/*
 * espeak-words: espeak-ng's synthesis with its own word timings. Speaks the text on stdin as `espeak-ng -v VOICE
 * -s WPM [-m] --stdout` does (the same library, the same flags), writes the audio as a WAV file to OUT, and prints
 * espeak-ng's events on stdout, one a line, in order:
 *   WORD <text position> <length> <ms>   a word starts (position: 1-based character in the input; ms: audio time)
 *   PHONEME <name> <ms>                 a phoneme starts ("_" and the like are pauses)
 *   END <ms>                            the end of the audio
 * The espeak-ng command line reports none of these. Built against libespeak-ng.so.1 itself (the Debian runtime
 * package), so the few declarations of espeak-ng's speak_lib.h it uses are repeated here.
 *
 * usage: espeak-words VOICE WPM SSML(0|1) OUT.wav < text
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  EV_LIST_TERMINATED = 0,
  EV_WORD = 1,
  EV_SENTENCE = 2,
  EV_MARK = 3,
  EV_PLAY = 4,
  EV_END = 5,
  EV_MSG_TERMINATED = 6,
  EV_PHONEME = 7,
  EV_SAMPLERATE = 8
} espeak_EVENT_TYPE;

typedef struct {
  espeak_EVENT_TYPE type;
  unsigned int unique_identifier;
  int text_position;
  int length;
  int audio_position;
  int sample;
  void *user_data;
  union {
    int number;
    const char *name;
    char string[8];
  } id;
} espeak_EVENT;

typedef int(t_espeak_callback)(short *, int, espeak_EVENT *);
extern int espeak_Initialize(int output, int buflength, const char *path, int options);
extern void espeak_SetSynthCallback(t_espeak_callback *cb);
extern int espeak_SetParameter(int parameter, int value, int relative);
extern int espeak_SetVoiceByName(const char *name);
extern int espeak_Synth(const void *text, size_t size, unsigned int position, int position_type, unsigned int end_position,
                        unsigned int flags, unsigned int *unique_identifier, void *user_data);
extern int espeak_Synchronize(void);
extern int espeak_Terminate(void);

#define AUDIO_OUTPUT_SYNCHRONOUS 2
#define INITIALIZE_PHONEME_EVENTS 0x0001
#define PARAM_RATE 1
#define POS_CHARACTER 1
#define CHARS_AUTO 0
#define SSML 0x10
#define PHONEMES 0x100
#define ENDPAUSE 0x1000

static FILE *wav;
static long samples;
static int rate;

static void put32(uint32_t v) {
  unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  fwrite(b, 1, 4, wav);
}
static void put16(uint16_t v) {
  unsigned char b[2] = {v & 0xff, (v >> 8) & 0xff};
  fwrite(b, 1, 2, wav);
}

static void header(uint32_t data_bytes) {
  fseek(wav, 0, SEEK_SET);
  fwrite("RIFF", 1, 4, wav);
  put32(36 + data_bytes);
  fwrite("WAVEfmt ", 1, 8, wav);
  put32(16);
  put16(1);
  put16(1);
  put32((uint32_t)rate);
  put32((uint32_t)rate * 2);
  put16(2);
  put16(16);
  fwrite("data", 1, 4, wav);
  put32(data_bytes);
}

static int on_synth(short *pcm, int n, espeak_EVENT *ev) {
  for (; ev != NULL && ev->type != EV_LIST_TERMINATED; ev++) {
    if (ev->type == EV_WORD)
      printf("WORD %d %d %d\n", ev->text_position, ev->length, ev->audio_position);
    else if (ev->type == EV_PHONEME) {
      char name[9] = {0};
      memcpy(name, ev->id.string, 8);
      printf("PHONEME %s %d\n", name[0] ? name : "?", ev->audio_position);
    }
  }
  if (pcm != NULL && n > 0) {
    fwrite(pcm, sizeof(short), (size_t)n, wav);
    samples += n;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: espeak-words VOICE WPM SSML(0|1) OUT.wav < text\n");
    return 2;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap + 1);
  for (size_t r; text != NULL && (r = fread(text + len, 1, cap - len, stdin)) > 0;) {
    len += r;
    if (len == cap) text = realloc(text, (cap *= 2) + 1);
  }
  if (text == NULL) return 1;
  text[len] = 0;
  rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, INITIALIZE_PHONEME_EVENTS);
  if (rate <= 0) {
    fprintf(stderr, "espeak-words: espeak-ng could not be initialised\n");
    return 1;
  }
  if (espeak_SetVoiceByName(argv[1]) != 0) {
    fprintf(stderr, "espeak-words: no voice %s\n", argv[1]);
    return 1;
  }
  espeak_SetParameter(PARAM_RATE, atoi(argv[2]), 0);
  wav = fopen(argv[4], "wb");
  if (wav == NULL) {
    perror("espeak-words");
    return 1;
  }
  header(0);
  espeak_SetSynthCallback(on_synth);
  unsigned int flags = CHARS_AUTO | PHONEMES | ENDPAUSE | (atoi(argv[3]) ? SSML : 0);
  if (espeak_Synth(text, len + 1, 0, POS_CHARACTER, 0, flags, NULL, NULL) != 0) {
    fprintf(stderr, "espeak-words: synthesis failed\n");
    return 1;
  }
  espeak_Synchronize();
  printf("END %ld\n", samples * 1000 / rate);
  header((uint32_t)(samples * 2));
  fclose(wav);
  espeak_Terminate();
  return 0;
}
